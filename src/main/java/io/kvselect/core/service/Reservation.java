package io.kvselect.core.service;

import io.kvselect.core.catalog.PartitionKey;

/** A booked reservation, as returned by {@code POST /reservations} (201). */
public record Reservation(
    String selectionId, PartitionKey partition, long workerId, int dpRank, String endpoint) {}
