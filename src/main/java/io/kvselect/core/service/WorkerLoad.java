package io.kvselect.core.service;

/** The chosen worker's projected load, added to advisory {@code /select} responses. */
public record WorkerLoad(
    long activePrefillTokens, long prefillTokenCapacity, Long totalKvBlocks, Boolean prefillBusy) {}
