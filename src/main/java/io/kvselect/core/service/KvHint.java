package io.kvselect.core.service;

/**
 * A {@code kv.fetch} hint: another worker of the same hint type holds a longer prefix and can
 * serve it from {@code sourceControlEndpoint}. {@code blockHashes} are root-aligned request
 * sequence hashes (entry i = request block i) up to the source's matched depth.
 */
public record KvHint(String messageId, String sourceControlEndpoint, long[] blockHashes) {}
