package io.kvselect.tools.sim;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.markers.SeriesMarkers;

/** The run's PNG plots, drawn with XChart: TTFT CDF per policy, mode share per policy. Stateless. */
final class Plots {

  static final String TTFT_CDF = "ttft_cdf.png";
  static final String MODE_SHARE = "mode_share.png";

  private Plots() {}

  static void write(Path dir, List<Simulator.Result> rs) throws IOException {
    XYChart cdf =
        new XYChartBuilder()
            .width(900)
            .height(560)
            .title("TTFT CDF")
            .xAxisTitle("TTFT (s, log scale)")
            .yAxisTitle("fraction of requests")
            .build();
    cdf.getStyler().setXAxisLogarithmic(true);
    for (Simulator.Result r : rs) {
      double[] t = r.ttftsSorted();
      int points = Math.min(t.length, 400);
      double[] x = new double[points];
      double[] y = new double[points];
      for (int i = 0; i < points; i++) {
        int k = (int) ((long) (i + 1) * t.length / points) - 1;
        x[i] = Math.max(1e-3, t[k] / 1000.0);
        y[i] = (k + 1) / (double) t.length;
      }
      if (points > 0) {
        cdf.addSeries(r.policy(), x, y).setMarker(SeriesMarkers.NONE);
      }
    }
    BitmapEncoder.saveBitmap(cdf, dir.resolve(TTFT_CDF).toString(), BitmapEncoder.BitmapFormat.PNG);

    CategoryChart modes =
        new CategoryChartBuilder()
            .width(900)
            .height(560)
            .title("Mode share per policy")
            .xAxisTitle("policy")
            .yAxisTitle("share of requests")
            .build();
    modes.getStyler().setStacked(true);
    List<String> names = new ArrayList<>();
    List<Double> direct = new ArrayList<>();
    List<Double> seed = new ArrayList<>();
    List<Double> reseed = new ArrayList<>();
    List<Double> fallback = new ArrayList<>();
    for (Simulator.Result r : rs) {
      names.add(r.policy());
      direct.add(r.direct());
      seed.add(r.seed());
      reseed.add(r.reseed());
      fallback.add(r.fallback());
    }
    modes.addSeries("direct", names, direct);
    modes.addSeries("seed", names, seed);
    modes.addSeries("reseed", names, reseed);
    modes.addSeries("fallback", names, fallback);
    BitmapEncoder.saveBitmap(
        modes, dir.resolve(MODE_SHARE).toString(), BitmapEncoder.BitmapFormat.PNG);
  }
}
