package io.kvselect.tools.mock;

/** Frame layout of the replay ROUTER's answers (after the identity and empty delimiter). */
public enum ReplayLayout {
  /** vLLM 0.26+ (PR #45177): {@code [topic][seq][payload]}, end marker {@code [""][ff x8][""]}. */
  TOPIC,
  /** Older vLLM and SGLang: {@code [seq][payload]}, end marker {@code [ff x8][""]}. */
  LEGACY
}
