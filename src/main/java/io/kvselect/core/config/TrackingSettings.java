package io.kvselect.core.config;

/**
 * The {@code tracking} section: the hash the router's block identities use. Immutable; values
 * are checked by {@link RouterConfigLoader} and the node's settings (a keyed hash needs a key).
 *
 * @param hash {@code hash}: {@code public-xxh3-v1} or {@code keyed-xxh3-v1}
 * @param keyFile {@code key_file}: the 32-byte key of the keyed hash (null: none)
 * @param keyId {@code key_id}: the key's identifier (null: none)
 */
public record TrackingSettings(String hash, String keyFile, String keyId) {

  /** The public hash, no key. */
  public static final TrackingSettings DEFAULTS =
      new TrackingSettings("public-xxh3-v1", null, null);
}
