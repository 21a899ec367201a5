package io.kvselect.core.load;

import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import it.unimi.dsi.fastutil.longs.LongArrayList;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * Active-load accounting of one partition across its ranks (spec §5.1): which requests are
 * admitted on which rank, the KV blocks they hold and their outstanding prefill tokens.
 *
 * <p>Invariants:
 *
 * <ul>
 *   <li>A block (sequence hash) is active on a rank while at least one live request on that rank
 *       holds it; requests sharing a prefix count shared blocks once.
 *   <li>Active decode blocks count the tracked sequence hashes and output blocks only; the
 *       untracked partial last block of a prompt enters {@link #potentialDecodeBlocks} but is
 *       never booked (Dynamo parity).
 *   <li>A rank's prefill load is the sum of the prefill tokens of its requests whose prefill has
 *       not completed; {@link #free} implies completion.
 *   <li>A rank row exists from {@link #addRank} or its first request until {@link #removeRank};
 *       it survives its last request being freed, so {@link #hasLoad} means "known rank".
 *   <li>Request age is absolute from admission; output progress never refreshes it.
 * </ul>
 *
 * <p>The live requests themselves (by id, in admission order, by origin) are kept by {@link
 * ActiveRequests}; this class books them on their ranks' {@link RankBlocks} and keeps the
 * invariants above.
 *
 * <p>Threading: not thread-safe. Owned by its partition: every call is made while holding that
 * partition's lock ({@code Partition.lock} in the service).
 *
 * <p>Complexity: add and free are O(blocks of the request); {@link #addOutputBlock} is O(1), or
 * O(blocks of the request) with a decay fraction; {@link #load} is O(1);
 * {@link #potentialDecodeBlocks} is O(prompt blocks), O(1) on a rank with no active block;
 * {@link #expire} is O(expired requests + 1), cheap enough to call on every mutation;
 * {@link #removeRank} is O(all requests).
 */
public final class ActiveLoad {

  /** {@code DYN_ROUTER_ACTIVE_REQUEST_EXPIRY_SECS} default. */
  public static final Duration DEFAULT_EXPIRY = Duration.ofSeconds(300);

  private final Clock clock;
  private final long expiryMillis;
  private final SplittableRandom random;
  private final Map<WorkerRank, RankBlocks> ranks = new HashMap<>();

  /** The live requests in admission order. */
  private final ActiveRequests requests = new ActiveRequests();

  /** Output-block hashes from a fixed seed; see {@link #ActiveLoad(Clock, Duration, long)}. */
  public ActiveLoad(Clock clock, Duration expiry) {
    this(clock, expiry, 0x6b76_7365_6c65_6374L);
  }

  /**
   * @param expiry age after which {@link #expire} frees a request; positive
   * @param seed seed of the random output-block hashes (collisions with real sequence hashes are
   *     as likely as any 64-bit hash collision)
   */
  public ActiveLoad(Clock clock, Duration expiry, long seed) {
    this.clock = Objects.requireNonNull(clock, "clock");
    if (expiry == null || expiry.isNegative() || expiry.isZero()) {
      throw new IllegalArgumentException("expiry must be positive: " + expiry);
    }
    this.expiryMillis = expiry.toMillis();
    this.random = new SplittableRandom(seed);
  }

  /** Registers a rank with zero load; no-op if known. */
  public void addRank(WorkerRank rank) {
    ranks.computeIfAbsent(Objects.requireNonNull(rank, "rank"), r -> new RankBlocks());
  }

  /**
   * Admits a request on {@code rank}, creating the rank row if needed (callers check that the
   * rank is schedulable first). Every prompt block is touched; {@code prefillTokens} join the
   * rank's prefill load when {@code trackPrefill && prefillTokens > 0}.
   *
   * @param sequenceHashes the prompt's tracked sequence hashes (copied); null means none
   * @param islTokens input length, kept with the request; must be {@code >= 0}
   * @param blockSize tokens per block; must be positive
   * @throws SelectionException CONFLICT if {@code requestId} is already active, BAD_REQUEST for
   *     a negative or zero argument named above
   */
  public void addRequest(
      String requestId,
      WorkerRank rank,
      long[] sequenceHashes,
      long islTokens,
      int blockSize,
      Integer expectedOutputTokens,
      boolean trackPrefill,
      long prefillTokens) {
    addRequest(
        requestId,
        rank,
        sequenceHashes,
        islTokens,
        blockSize,
        expectedOutputTokens,
        trackPrefill,
        prefillTokens,
        null);
  }

  /**
   * As {@link #addRequest(String, WorkerRank, long[], long, int, Integer, boolean, long)}, for a
   * request booked by {@code origin}: null for this node, else a peer's node id (a booking that
   * peer published). The origin decides who may free the request in reconciliation
   * ({@link #requests(String)}, {@link #removeOrigin}).
   */
  public void addRequest(
      String requestId,
      WorkerRank rank,
      long[] sequenceHashes,
      long islTokens,
      int blockSize,
      Integer expectedOutputTokens,
      boolean trackPrefill,
      long prefillTokens,
      String origin) {
    Objects.requireNonNull(requestId, "requestId");
    Objects.requireNonNull(rank, "rank");
    requireShape(islTokens, blockSize);
    if (prefillTokens < 0) {
      throw SelectionException.badRequest("effective_prefill_tokens must not be negative");
    }
    if (expectedOutputTokens != null && expectedOutputTokens < 0) {
      throw SelectionException.badRequest("expected_output_tokens must not be negative");
    }
    if (requests.contains(requestId)) {
      throw SelectionException.conflict("request '" + requestId + "' is already active");
    }
    long prefill = trackPrefill ? prefillTokens : 0;
    ActiveRequest r =
        new ActiveRequest(
            requestId,
            rank,
            sequenceHashes,
            clock.millis(),
            islTokens,
            expectedOutputTokens,
            prefill,
            origin);
    RankBlocks blocks = ranks.computeIfAbsent(rank, k -> new RankBlocks());
    for (long h : r.promptHashes) {
      blocks.touch(h);
    }
    blocks.prefillTokens += prefill;
    blocks.requests++;
    requests.add(r);
  }

  /**
   * Clears the request's prefill load; its blocks stay active. Idempotent.
   *
   * @return false if the request is not active
   */
  public boolean markPrefillComplete(String requestId) {
    ActiveRequest r = requests.get(requestId);
    if (r == null) {
      return false;
    }
    if (r.prefillTokens != 0) {
      ranks.get(r.rank).prefillTokens -= r.prefillTokens;
      r.prefillTokens = 0;
    }
    return true;
  }

  /**
   * Releases the request: its prefill load and one reference to each of its blocks.
   *
   * @return false if the request is not active
   */
  public boolean free(String requestId) {
    ActiveRequest r = requests.remove(requestId);
    if (r == null) {
      return false;
    }
    release(r);
    return true;
  }

  /**
   * Adds one generated block with a random hash. With a {@code decayFraction} f, every block held
   * only by this request (refcount 1) is then weighted by f in the active block count, until
   * another request touches it or it is freed; shared blocks keep weight 1. Local accounting
   * only, never replicated.
   *
   * @return false if the request is not active
   * @throws SelectionException BAD_REQUEST if f is outside [0, 1] or NaN
   */
  public boolean addOutputBlock(String requestId, Double decayFraction) {
    if (decayFraction != null && !(decayFraction >= 0.0 && decayFraction <= 1.0)) {
      throw new SelectionException(ErrorCode.BAD_REQUEST, "decay_fraction must be in [0.0, 1.0]");
    }
    ActiveRequest r = requests.get(requestId);
    if (r == null) {
      return false;
    }
    RankBlocks blocks = ranks.get(r.rank);
    long hash = random.nextLong();
    if (r.outputHashes == null) {
      r.outputHashes = new LongArrayList(4);
    }
    r.outputHashes.add(hash);
    blocks.touch(hash);
    if (decayFraction != null) {
      double f = decayFraction;
      for (long h : r.promptHashes) {
        weighIfSole(blocks, h, f);
      }
      for (int i = 0, n = r.outputHashes.size(); i < n; i++) {
        weighIfSole(blocks, r.outputHashes.getLong(i), f);
      }
    }
    return true;
  }

  private static void weighIfSole(RankBlocks blocks, long hash, double f) {
    if (blocks.heldOnce(hash)) {
      blocks.weigh(hash, f);
    }
  }

  /** The rank's load; {@link RankLoad#ZERO} for an unknown rank (see {@link #hasLoad}). */
  public RankLoad load(WorkerRank rank) {
    RankBlocks blocks = ranks.get(rank);
    return blocks == null ? RankLoad.ZERO : blocks.load();
  }

  /** Whether the rank has a load row (registered or admitted to, and not removed). */
  public boolean hasLoad(WorkerRank rank) {
    return ranks.containsKey(rank);
  }

  /**
   * Projected decode blocks if this prompt were admitted on {@code rank}: active decode blocks,
   * plus prompt blocks whose sequence hashes are not active there, plus the untracked partial
   * block {@code max(0, ceil(isl / blockSize) - sequenceHashes.length)}.
   */
  public long potentialDecodeBlocks(
      WorkerRank rank, long[] sequenceHashes, long islTokens, int blockSize) {
    requireShape(islTokens, blockSize);
    int tracked = sequenceHashes == null ? 0 : sequenceHashes.length;
    long requestBlocks = (islTokens + blockSize - 1) / blockSize;
    long partial = Math.max(0, requestBlocks - tracked);
    RankBlocks blocks = ranks.get(rank);
    if (blocks == null || blocks.isIdle()) {
      return tracked + partial;
    }
    long fresh = 0;
    for (int i = 0; i < tracked; i++) {
      if (!blocks.isActive(sequenceHashes[i])) {
        fresh++;
      }
    }
    return blocks.activeDecodeBlocks() + fresh + partial;
  }

  /**
   * Frees every request whose age reached the expiry ({@code now - admitted >= expiry}), oldest
   * first. Scans in admission order and stops at the first live request, so a clock that steps
   * backwards may delay, never lose, an expiry.
   *
   * @return ids of the freed requests, oldest first
   */
  public List<String> expire() {
    return requests.expire(clock.millis(), expiryMillis, this::release);
  }

  /**
   * Drops a removed rank: its row and all its requests. A later {@link #addRequest} for the rank
   * creates a fresh row, so callers book only on schedulable ranks.
   *
   * @return ids of the dropped requests in admission order
   */
  public List<String> removeRank(WorkerRank rank) {
    if (ranks.remove(rank) == null) {
      return List.of();
    }
    // the row is gone with its blocks: the requests are dropped, not released
    return requests.removeIf(r -> r.rank.equals(rank), r -> {});
  }

  /** The rank a request is admitted on, or null if it is not active. */
  public WorkerRank rankOf(String requestId) {
    ActiveRequest r = requests.get(requestId);
    return r == null ? null : r.rank;
  }

  /** Whether {@code requestId} is active. */
  public boolean isActive(String requestId) {
    return requests.contains(requestId);
  }

  /**
   * The origin of an active request: null when this node booked it or when it is not active
   * (tell the two apart with {@link #isActive}).
   */
  public String originOf(String requestId) {
    ActiveRequest r = requests.get(requestId);
    return r == null ? null : r.origin;
  }

  /**
   * One active request as its origin would re-book it: the admission arguments, with the prefill
   * tokens still outstanding (0 once prefill completed).
   */
  public record RequestView(
      String requestId,
      WorkerRank rank,
      long[] sequenceHashes,
      long islTokens,
      Integer expectedOutputTokens,
      long prefillTokens,
      String origin) {}

  /**
   * The active requests booked by {@code origin} (null: this node), in admission order. O(all
   * requests); the hashes are shared with the request, so callers must not modify them.
   */
  public List<RequestView> requests(String origin) {
    return requests.views(origin);
  }

  /**
   * Frees every request booked by {@code origin} (a peer that died). O(all requests).
   *
   * @return ids of the freed requests in admission order
   */
  public List<String> removeOrigin(String origin) {
    return requests.removeIf(r -> Objects.equals(r.origin, origin), this::release);
  }

  /** The distinct origins of the active requests (null stands for this node). O(all requests). */
  public Set<String> origins() {
    return requests.origins();
  }

  /** A snapshot of the ranks that have a load row. */
  public Set<WorkerRank> ranks() {
    return Set.copyOf(ranks.keySet());
  }

  /** Number of active requests across all ranks. */
  public int size() {
    return requests.size();
  }

  private void release(ActiveRequest r) {
    RankBlocks blocks = ranks.get(r.rank);
    for (long h : r.promptHashes) {
      blocks.release(h);
    }
    for (int i = 0, n = r.outputBlockCount(); i < n; i++) {
      blocks.release(r.outputHashes.getLong(i));
    }
    blocks.prefillTokens -= r.prefillTokens;
    r.prefillTokens = 0;
    blocks.requests--;
  }

  private static void requireShape(long islTokens, int blockSize) {
    if (blockSize <= 0) {
      throw SelectionException.badRequest("block_size must be positive");
    }
    if (islTokens < 0) {
      throw SelectionException.badRequest("isl_tokens must not be negative");
    }
  }
}
