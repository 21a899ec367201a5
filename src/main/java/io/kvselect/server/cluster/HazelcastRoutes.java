package io.kvselect.server.cluster;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.instance.impl.HazelcastInstanceImpl;
import com.hazelcast.instance.impl.HazelcastInstanceProxy;
import com.hazelcast.internal.partition.InternalPartition;
import com.hazelcast.internal.partition.PartitionReplica;
import io.kvselect.core.budget.CallBudget;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The members a call on a key of a Hazelcast map waits for, from the local partition table (no
 * remote call): a read waits for the partition's owner ({@code read-backup-data} is off on every
 * {@code kvselect.*} map), a write for the owner and its {@code backups} synchronous backups, so
 * a paused backup trips the breaker of the writes it stalls and nothing else ({@link CallBudget}).
 *
 * <p>The backups are read from Hazelcast's internal partition table ({@code InternalPartition},
 * the only place they are exposed; the public {@code Partition} names the owner only). Where that
 * is not reachable (another instance type) the write route is the owner alone, logged once: the
 * breaker then works as it did with one route per owner.
 *
 * <p>Stateless apart from the instance it reads; safe from any thread.
 */
final class HazelcastRoutes implements CallBudget.Routes {

  private static final Logger LOG = LoggerFactory.getLogger(HazelcastRoutes.class);

  private final HazelcastInstance hz;
  private final Function<Object, String> mapKey;
  private final int backups;
  private final HazelcastInstanceImpl impl;

  /**
   * @param mapKey turns a seam's key into the map's key
   * @param backups the maps' synchronous backup count ({@code cluster.xml}: 1)
   */
  HazelcastRoutes(HazelcastInstance hz, Function<Object, String> mapKey, int backups) {
    this.hz = hz;
    this.mapKey = mapKey;
    this.backups = backups;
    HazelcastInstanceImpl i = null;
    if (hz instanceof HazelcastInstanceProxy p) {
      i = p.getOriginal();
    } else if (hz instanceof HazelcastInstanceImpl direct) {
      i = direct;
    }
    if (i == null) {
      LOG.info(
          "cluster call budget: the partition table of {} is not readable; writes are routed by owner only",
          hz.getClass().getName());
    }
    this.impl = i;
  }

  @Override
  public Object read(Object key) {
    com.hazelcast.partition.Partition part =
        hz.getPartitionService().getPartition(mapKey.apply(key));
    return part == null ? null : part.getOwner();
  }

  @Override
  public Object write(Object key) {
    if (impl == null) {
      return read(key);
    }
    try {
      int id = impl.node.getPartitionService().getPartitionId(mapKey.apply(key));
      InternalPartition p = impl.node.getPartitionService().getPartition(id);
      PartitionReplica owner = p.getReplica(0);
      if (owner == null) {
        return null;
      }
      List<Object> route = new ArrayList<>(1 + backups);
      route.add(owner.uuid());
      for (int i = 1; i <= backups; i++) {
        PartitionReplica b = p.getReplica(i);
        if (b != null) {
          route.add(b.uuid());
        }
      }
      return route;
    } catch (RuntimeException e) {
      // the instance is shutting down, or the table is not readable: wait the budget
      return null;
    }
  }
}
