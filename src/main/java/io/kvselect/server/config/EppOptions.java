package io.kvselect.server.config;

import picocli.CommandLine.Option;

/**
 * The endpoint-picker flags of {@link KvselectCommand} (a picocli mixin): boxed and null when
 * absent, so that {@link EppDraft} layers them over the config file and the environment. A mutable
 * picocli target confined to the parsing thread.
 */
public final class EppOptions {

  @Option(
      names = "--epp-port",
      paramLabel = "PORT",
      description =
          "Serve Envoy ext_proc (the Gateway API endpoint picker) and gRPC health on this port,"
              + " 0..65535 (0: ephemeral); off when unset (KVSELECT_EPP_PORT).")
  Integer port;

  @Option(
      names = "--epp-render-url",
      paramLabel = "URL",
      description =
          "Base URL of a vLLM-compatible render server (POST /v1/chat/completions/render);"
              + " unset: the partition's worker endpoints (KVSELECT_EPP_RENDER_URL).")
  String renderUrl;

  @Option(
      names = "--epp-render-timeout-secs",
      paramLabel = "SECS",
      description =
          "Longest wait for a render before a 504, > 0 (5; KVSELECT_EPP_RENDER_TIMEOUT_SECS).")
  Double renderTimeoutSecs;

  @Option(
      names = "--epp-routing-group-header",
      paramLabel = "NAME",
      description =
          "Request header naming the routing group (x-kvselect-routing-group;"
              + " KVSELECT_EPP_ROUTING_GROUP_HEADER).")
  String routingGroupHeader;

  @Option(
      names = "--epp-session-header",
      paramLabel = "NAME",
      description =
          "Request header naming the session (x-session-id; KVSELECT_EPP_SESSION_HEADER).")
  String sessionHeader;

  @Option(
      names = "--epp-fallbacks",
      paramLabel = "N",
      description =
          "Other endpoints listed after the pick for the gateway to retry, 0..8 (2; KVSELECT_EPP_FALLBACKS).")
  Integer fallbacks;

  @Option(
      names = "--epp-max-body-bytes",
      paramLabel = "BYTES",
      description =
          "Largest request body the picker buffers before a 413 (16777216; KVSELECT_EPP_MAX_BODY_BYTES).")
  Integer maxBodyBytes;

  @Option(
      names = "--epp-inject-token-ids",
      negatable = true,
      description =
          "Forward a text /v1/completions prompt as the token ids it rendered to (off;"
              + " KVSELECT_EPP_INJECT_TOKEN_IDS).")
  Boolean injectTokenIds;
}
