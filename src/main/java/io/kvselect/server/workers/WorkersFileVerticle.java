package io.kvselect.server.workers;

import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.catalog.WorkerSpec;
import io.kvselect.core.service.SelectionService;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.file.FileProps;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code --workers-file}: applies the file at start and again whenever it changes. The file is
 * checked every poll period: its size and modification time first, and its content (SHA-256)
 * when either changed or every {@value #REHASH_EVERY} periods (a same-size edit within the
 * timestamp granularity is still seen). New content is applied once it has stayed the same for
 * one period, so a file caught half-written is not applied (the first apply at start does not
 * wait). Reading uses the asynchronous file system, parsing runs on
 * a worker thread, catalog calls compose their stages; nothing blocks the event loop.
 *
 * <p>Applying is an upsert of every entry that differs from what this file last applied, then a
 * delete of every worker this file added earlier and no longer lists. Workers registered over
 * HTTP are never touched: an entry whose id is registered but was not added by this file is
 * skipped with a warning, and a file-added worker that was re-registered over HTTP since is
 * forgotten rather than deleted. A failed apply (a parse error, an invalid entry, a refused
 * upsert) is logged once per content with the entry and the field, changes nothing that was not
 * already applied, and is retried every period until the file is fixed.
 *
 * <p>Ownership: every field below is confined to this verticle's context; {@link #busy} keeps
 * one check at a time.
 */
public final class WorkersFileVerticle extends VerticleBase {

  private static final Logger LOG = LoggerFactory.getLogger(WorkersFileVerticle.class);
  static final int REHASH_EVERY = 10;

  private final SelectionService service;
  private final Path file;
  private final Duration poll;

  /** Workers added by this file, with the spec it last applied to each. */
  private final Map<Long, WorkerSpec> applied = new LinkedHashMap<>();

  private String appliedHash;

  /** Content seen once and not applied yet: applied when the next look finds it unchanged. */
  private String pendingHash;

  private long seenModified = -1;
  private long seenSize = -1;
  private int sinceRead;
  private String lastProblem;

  /** The last apply failed: read and apply again at the next period even if nothing changed. */
  private boolean retry;

  private boolean busy;
  private long timer = -1;

  public WorkersFileVerticle(SelectionService service, Path file, Duration poll) {
    this.service = service;
    this.file = file;
    this.poll = poll;
  }

  /** Applies the file once (a failure is logged, not fatal), then starts polling. */
  @Override
  public Future<?> start() {
    return check()
        .andThen(ar -> timer = vertx.setPeriodic(Math.max(1, poll.toMillis()), id -> check()));
  }

  @Override
  public Future<?> stop() {
    if (timer >= 0) {
      vertx.cancelTimer(timer);
    }
    return Future.succeededFuture();
  }

  private Future<Void> check() {
    if (busy) {
      return Future.succeededFuture();
    }
    busy = true;
    String path = file.toString();
    return vertx
        .fileSystem()
        .props(path)
        .compose(props -> changed(props) ? read(path, props) : Future.succeededFuture())
        .recover(
            e -> {
              problem("cannot be read: " + e.getMessage());
              return Future.succeededFuture();
            })
        .andThen(ar -> busy = false);
  }

  private boolean changed(FileProps props) {
    sinceRead++;
    return retry
        || appliedHash == null
        || props.lastModifiedTime() != seenModified
        || props.size() != seenSize
        || sinceRead >= REHASH_EVERY;
  }

  private Future<Void> read(String path, FileProps props) {
    return vertx
        .fileSystem()
        .readFile(path)
        .compose(
            content -> {
              sinceRead = 0;
              seenModified = props.lastModifiedTime();
              seenSize = props.size();
              String hash = sha256(content);
              if (hash.equals(appliedHash)) {
                pendingHash = null;
                return Future.succeededFuture();
              }
              if (appliedHash != null && !hash.equals(pendingHash)) {
                // changed since the last look: wait one period for the content to settle (an editor
                // or a
                // shell redirect may still be writing it), then apply if it is unchanged
                pendingHash = hash;
                retry = true;
                return Future.succeededFuture();
              }
              String name = file.getFileName() == null ? path : file.getFileName().toString();
              return vertx
                  .executeBlocking(() -> WorkersFileFormat.parse(name, content.getBytes()), false)
                  .compose(this::apply)
                  .onSuccess(
                      summary -> {
                        appliedHash = hash;
                        pendingHash = null;
                        lastProblem = null;
                        retry = false;
                        LOG.info("workers file {} applied: {}", file, summary);
                      })
                  .recover(
                      e -> {
                        retry = true;
                        problem("not applied, the previous workers stay: " + e.getMessage());
                        return Future.succeededFuture();
                      })
                  .mapEmpty();
            });
  }

  /** Upserts changed entries one after another, then deletes dropped ones; a summary line. */
  private Future<String> apply(List<WorkerSpec> specs) {
    Map<Long, WorkerSpec> listed = new LinkedHashMap<>();
    specs.forEach(s -> listed.put(s.workerId(), s));
    List<WorkerSpec> upserts = new ArrayList<>();
    Set<String> skipped = new TreeSet<>();
    for (WorkerSpec s : specs) {
      WorkerRecord current = service.worker(s.workerId());
      WorkerSpec mine = applied.get(s.workerId());
      if (current != null && mine == null) {
        skipped.add(Long.toUnsignedString(s.workerId()));
      } else if (!(current != null && s.equals(mine))) {
        upserts.add(s);
      }
    }
    List<Long> deletes = new ArrayList<>();
    for (Map.Entry<Long, WorkerSpec> e : List.copyOf(applied.entrySet())) {
      if (!listed.containsKey(e.getKey())) {
        WorkerRecord current = service.worker(e.getKey());
        if (current != null && current.spec().equals(e.getValue())) {
          deletes.add(e.getKey());
        } else {
          applied.remove(e.getKey());
        }
      }
    }
    if (!skipped.isEmpty()) {
      LOG.warn(
          "workers file {}: worker_id {} registered over HTTP; left as it is",
          file,
          String.join(", ", skipped));
    }
    Future<Void> chain = Future.succeededFuture();
    for (WorkerSpec s : upserts) {
      chain =
          chain.compose(
              v ->
                  Future.fromCompletionStage(service.upsertWorker(s), context)
                      .recover(
                          e ->
                              Future.failedFuture(
                                  new IllegalArgumentException(
                                      "worker_id "
                                          + Long.toUnsignedString(s.workerId())
                                          + ": "
                                          + io.kvselect.core.error.SelectionException.unwrap(e)
                                              .getMessage(),
                                      e)))
                      .map(
                          r -> {
                            applied.put(s.workerId(), s);
                            return null;
                          }));
    }
    for (long id : deletes) {
      chain =
          chain.compose(
              v ->
                  Future.fromCompletionStage(service.deleteWorker(id), context)
                      .otherwise(e -> null)
                      .map(
                          r -> {
                            applied.remove(id);
                            return null;
                          }));
    }
    int unchanged = listed.size() - upserts.size() - skipped.size();
    return chain.map(
        v ->
            listed.size()
                + " listed ("
                + upserts.size()
                + " registered or changed, "
                + unchanged
                + " unchanged, "
                + deletes.size()
                + " removed"
                + (skipped.isEmpty() ? "" : ", " + skipped.size() + " left to HTTP")
                + ")");
  }

  /** Logs a problem once per distinct message. */
  private void problem(String message) {
    if (!Objects.equals(message, lastProblem)) {
      lastProblem = message;
      LOG.warn("workers file {} {}; retrying every {} ms", file, message, poll.toMillis());
    }
  }

  private static String sha256(Buffer content) {
    try {
      return HexFormat.of()
          .formatHex(MessageDigest.getInstance("SHA-256").digest(content.getBytes()));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
