package io.kvselect.core.service;

/** Load of one rank: current ({@code /loads}) or projected with a prompt ({@code /potential_loads}). */
public record PotentialLoad(
    long workerId,
    int dpRank,
    long potentialPrefillTokens,
    long potentialDecodeBlocks,
    long activeRequests) {}
