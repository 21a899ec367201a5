package io.kvselect.tools.mock;

/** How the mock engines encode each KV event inside the {@code [ts, events, rank]} envelope. */
public enum WireFormat {
  /** vLLM 0.26+ (PR #42892): tagged msgpack maps, the tag under {@code "type"}. */
  MAP,
  /** vLLM up to 0.23: tagged arrays; {@code BlockStored} has 9 elements, {@code extra_keys} last. */
  ARRAY
}
