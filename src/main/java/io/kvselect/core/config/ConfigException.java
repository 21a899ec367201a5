package io.kvselect.core.config;

/**
 * An invalid configuration value. The message is one line and names its source: the environment
 * variable (e.g. {@code DYN_ROUTER_TEMPERATURE}) or the dotted config field (e.g. {@code config
 * field router.router_temperature}). Raised at startup only, never per request.
 */
public final class ConfigException extends RuntimeException {

  public ConfigException(String message) {
    super(message, null, false, false);
  }
}
