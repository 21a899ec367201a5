package io.kvselect.server.events;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** What a replay of [from, to) recovered, and what is still worth delivering after a reset. */
class ReplayOutcomeTest {

  @ParameterizedTest(name = "[{index}] [{0},{1}) got ''{2}'' stop={3} -> {4}")
  @CsvSource(
      delimiter = '|',
      nullValues = "-",
      textBlock =
          """
      # from | to | received   | stop cause | complete | reason contains        | deliverable
      2      | 5  | 2 3 4      | -          | true     | -                      | 2 3 4
      0      | 1  | 0          | -          | true     | -                      | 0
      2      | 5  | 2 2 3 4    | -          | true     | -                      | 2 3 4
      2      | 5  | ''         | -          | false    | returned nothing       | ''
      2      | 5  | ''         | timeout    | false    | (timeout)              | ''
      2      | 5  | 3 4        | -          | false    | started after          | 3 4
      2      | 6  | 2 4 5      | -          | false    | not contiguous         | 4 5
      2      | 6  | 2 3        | timeout    | false    | ended before the target | ''
      2      | 6  | 3 5        | -          | false    | started after          | 5
      """)
  void table(
      long from,
      long to,
      String received,
      String stopCause,
      boolean complete,
      String reasonPart,
      String deliverable) {
    ReplayOutcome outcome = ReplayOutcome.evaluate(from, to, batches(received), stopCause);
    assertEquals(complete, outcome.complete());
    if (reasonPart == null) {
      assertNull(outcome.reason());
    } else {
      assertTrue(outcome.reason().contains(reasonPart), outcome.reason());
    }
    assertEquals(
        deliverable.trim(),
        String.join(" ", outcome.deliverable().stream().map(b -> Long.toString(b.seq())).toList()));
  }

  private static List<Batch> batches(String seqs) {
    return Arrays.stream(seqs.trim().split("\\s+"))
        .filter(s -> !s.isEmpty())
        .map(s -> new Batch(Long.parseLong(s), new byte[] {1}))
        .toList();
  }
}
