package io.kvselect.core.service;

/**
 * A {@code kv.fetch} hint: another worker of the same hint type holds a longer prefix and can
 * serve it from {@code sourceControlEndpoint}. {@code blockHashes} are root-aligned external
 * hashes: entry i is the hash the source's rank itself published for request block i (not the
 * router's sequence hash), for every leading block it holds on the device tier. They are unsigned
 * 64-bit values carried in {@code long}s.
 */
public record KvHint(String messageId, String sourceControlEndpoint, long[] blockHashes) {}
