package io.kvselect.server.cluster;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.EntryProcessor;
import com.hazelcast.map.ExtendedMapEntry;
import com.hazelcast.map.IMap;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.pending.PendingEntry;
import io.kvselect.core.pending.PendingStore;
import java.io.Serializable;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A {@link PendingStore} shared by every node of a cluster, so that {@code /select} on one node
 * and the cached-replay {@code /reservations} on another book the selection, once. Entries live
 * in the Hazelcast {@code IMap} {@value ClusterBootstrap#PENDING_MAP} (one synchronous backup).
 *
 * <p>Limits, as configured for the local cache: the TTL is the entry's Hazelcast TTL (an expired
 * entry reads as absent); {@code max_entries} is the map's per-member LRU eviction size
 * ({@link ClusterBootstrap#config}); an entry larger than {@code max_bytes} is not stored (as the
 * local cache does, it evicts itself). The total byte budget is therefore bounded by the entry
 * cap rather than tracked cluster-wide.
 *
 * <p>Exactly once. The core replays in three steps: {@link #peek}, book, then
 * {@link #removeIfGeneration}. Each step is one atomic operation on the key's owner member, and
 * {@code peek} also <em>claims</em> the entry for the calling member for {@value #CLAIM_MILLIS}
 * ms: a peek from another member during the claim fails with 409 (the selection is being
 * reserved elsewhere), so two nodes replaying one selection at once cannot both book it. The
 * member holding the claim may peek again at once (its own reservation index already refuses a
 * concurrent second booking of the id), so a replay that failed can be retried on the same node
 * immediately and on another node once the claim lapses. Generations are random 64-bit values,
 * so a late consume never removes a newer entry under the same key.
 *
 * <p>Keys and values are the service's own records, encoded by {@link RecordCodec}; the stored
 * value is a {@link Serializable} record holding those bytes (see {@link HazelcastSessionAffinity}
 * for why plain serialization). Stages complete on {@code completions}, never on Hazelcast's
 * threads; nothing here blocks. Stateless apart from the map.
 *
 * @param <K> key (a record)
 * @param <V> value (a record)
 */
public final class HazelcastPendingStore<K, V> implements PendingStore<K, V> {

  /** How long a peek keeps the entry for its member. */
  public static final long CLAIM_MILLIS = 5_000;

  /** A stored entry: the encoded value, its generation, and the member holding a replay claim. */
  record Stored(byte[] payload, long generation, String claimant, long claimUntilMillis)
      implements Serializable {}

  /** What a peek saw: the entry, or that another member holds its claim. */
  record Peeked(byte[] payload, long generation, boolean claimedElsewhere)
      implements Serializable {}

  private final IMap<String, Stored> map;
  private final String member;
  private final Clock clock;
  private final long ttlMillis;
  private final long maxBytes;
  private final Executor completions;

  /**
   * @param ttl entry lifetime; positive
   * @param maxBytes largest entry stored; positive
   * @param completions where returned stages complete (the event loops)
   */
  public HazelcastPendingStore(
      HazelcastInstance hazelcast, Clock clock, Duration ttl, long maxBytes, Executor completions) {
    if (ttl == null || ttl.isNegative() || ttl.isZero()) {
      throw new IllegalArgumentException("ttl must be positive: " + ttl);
    }
    if (maxBytes <= 0) {
      throw new IllegalArgumentException("maxBytes must be positive");
    }
    this.map = hazelcast.getMap(ClusterBootstrap.PENDING_MAP);
    this.member = hazelcast.getCluster().getLocalMember().getUuid().toString();
    this.clock = Objects.requireNonNull(clock, "clock");
    this.ttlMillis = Math.max(1, ttl.toMillis());
    this.maxBytes = maxBytes;
    this.completions = Objects.requireNonNull(completions, "completions");
  }

  static String key(Object k) {
    return Base64.getEncoder().encodeToString(RecordCodec.encode(Objects.requireNonNull(k, "key")));
  }

  @Override
  public CompletionStage<Long> put(K key, V value, long bytes) {
    try {
      Objects.requireNonNull(value, "value");
      if (bytes < 0) {
        throw new IllegalArgumentException("bytes must not be negative: " + bytes);
      }
      long generation = ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
      String k = key(key);
      if (bytes > maxBytes) {
        return hop(map.removeAsync(k)).thenApply(x -> generation);
      }
      Stored s = new Stored(RecordCodec.encode(value), generation, null, 0);
      return hop(map.setAsync(k, s, ttlMillis, TimeUnit.MILLISECONDS)).thenApply(x -> generation);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  @SuppressWarnings("unchecked")
  public CompletionStage<PendingEntry<V>> peek(K key) {
    try {
      return hop(map.submitToKey(key(key), new Peek(member, clock.millis(), CLAIM_MILLIS)))
          .thenApply(
              p -> {
                if (p == null) {
                  return null;
                }
                if (p.claimedElsewhere()) {
                  throw SelectionException.conflict(
                      "selection "
                          + selectionId(key)
                          + " is being reserved through another node; retry in a few seconds if that fails");
                }
                return new PendingEntry<>((V) RecordCodec.decode(p.payload()), p.generation());
              });
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public CompletionStage<Boolean> removeIfGeneration(K key, long generation) {
    try {
      return hop(map.submitToKey(key(key), new RemoveIfGeneration(generation)));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public CompletionStage<Void> remove(K key) {
    try {
      return hop(map.removeAsync(key(key))).thenApply(x -> null);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** Entries whose primary copy this member holds (a local view, no remote call). */
  @Override
  public int size() {
    return (int) map.getLocalMapStats().getOwnedEntryCount();
  }

  /** The selection id of a key record for messages (its last String component), else the key itself. */
  private static String selectionId(Object key) {
    if (key instanceof Record r) {
      var components = r.getClass().getRecordComponents();
      for (int i = components.length - 1; i >= 0; i--) {
        if (components[i].getType() == String.class) {
          try {
            components[i].getAccessor().setAccessible(true);
            return String.valueOf(components[i].getAccessor().invoke(r));
          } catch (ReflectiveOperationException | RuntimeException e) {
            break;
          }
        }
      }
    }
    return String.valueOf(key);
  }

  private <T> CompletionStage<T> hop(CompletionStage<T> stage) {
    return ClusterStages.hop(stage, completions);
  }

  /** Reads the entry and claims it for {@code member} unless another member's claim is still running. */
  record Peek(String member, long now, long claimMillis)
      implements EntryProcessor<String, Stored, Peeked> {
    @Override
    public Peeked process(Map.Entry<String, Stored> entry) {
      Stored s = entry.getValue();
      if (s == null) {
        return null;
      }
      if (s.claimant() != null && !s.claimant().equals(member) && now < s.claimUntilMillis()) {
        return new Peeked(null, s.generation(), true);
      }
      Stored claimed = new Stored(s.payload(), s.generation(), member, now + claimMillis);
      ((ExtendedMapEntry<String, Stored>) entry).setValueWithoutChangingExpiryTime(claimed);
      return new Peeked(s.payload(), s.generation(), false);
    }
  }

  /** Removes the entry when it still has {@code generation}. */
  record RemoveIfGeneration(long generation) implements EntryProcessor<String, Stored, Boolean> {
    @Override
    public Boolean process(Map.Entry<String, Stored> entry) {
      Stored s = entry.getValue();
      if (s == null || s.generation() != generation) {
        return false;
      }
      entry.setValue(null);
      return true;
    }
  }
}
