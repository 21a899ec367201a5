package io.kvselect.core.service;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.error.SelectionException;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Whether new selections may start, and the partition they start in: refused (503) while the
 * service shuts down or is held, or when the partition has no schedulable worker.
 *
 * <p>State and owner: the shutting-down flag (set once by {@link SelectionService#shutdown}) and
 * the hold (set once by the node's wiring) are volatile fields written by those calls only and
 * read by every selection and booking.
 */
final class ServiceGate {

  private final WorkerRegistry registry;
  private volatile boolean shuttingDown;

  /** Why new selections are refused now, or null. */
  private volatile Supplier<String> hold = () -> null;

  ServiceGate(WorkerRegistry registry) {
    this.registry = registry;
  }

  void shutdown() {
    shuttingDown = true;
  }

  boolean shuttingDown() {
    return shuttingDown;
  }

  void hold(Supplier<String> reason) {
    this.hold = Objects.requireNonNull(reason);
  }

  /** Ready when not shutting down, not held, and at least one worker is schedulable. */
  boolean ready(int schedulable) {
    return !shuttingDown && hold.get() == null && schedulable > 0;
  }

  /** The partition a new selection or booking runs in; 503 when none may start there now. */
  Partition readyPartition(PartitionKey key) {
    if (shuttingDown) {
      throw SelectionException.notReady("selection service is shutting down");
    }
    String held = hold.get();
    if (held != null) {
      throw SelectionException.notReady(held);
    }
    Partition p = registry.partition(key);
    if (p == null || !p.members().ready()) {
      if (registry.schedulableCount() == 0) {
        throw SelectionException.notReady("no schedulable workers are available");
      }
      throw SelectionException.notReady("no schedulable workers for " + key);
    }
    return p;
  }
}
