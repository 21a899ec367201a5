package io.kvselect.core.service;

import io.kvselect.core.catalog.WorkerRecord;
import java.util.List;

/** {@code GET /ready}: {@code ready = !shutting_down && schedulable_workers > 0}. */
public record ReadyStatus(boolean ready, int schedulableWorkers, List<WorkerRecord> workers) {}
