package io.kvselect.core.events;

/**
 * One KV-cache event of an engine, as vLLM and SGLang publish it (decoded from msgpack).
 * Hashes are the engine's opaque block ids as 64-bit values.
 */
public sealed interface KvEvent permits BlockStored, BlockRemoved, AllBlocksCleared {}
