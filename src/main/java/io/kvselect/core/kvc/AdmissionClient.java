package io.kvselect.core.kvc;

import java.util.concurrent.CompletionStage;

/**
 * The worker admission RPC: {@code POST endpoint} with {@code {session_id, turn, input_tokens,
 * append_tokens}}, answered {@code {can_admit, mode, reason}}. The transport lives in the server
 * (an adapter implements this); the core only composes the stage.
 *
 * <p>Contract: never completes exceptionally and never blocks the caller. No answer within the
 * implementation's short timeout completes with a reject of reason {@link AdmitDecision#TIMEOUT};
 * a failed call or an unreadable answer with {@link AdmitDecision#RPC_ERROR}. A {@code mode} of
 * {@code direct}, {@code seed} or {@code reseed} is taken as is; an admission without one is mapped
 * with {@link #modeFor}.
 */
@FunctionalInterface
public interface AdmissionClient {

  CompletionStage<AdmitDecision> admit(String endpoint, KvcRequest r);

  /**
   * The mode of an admission answered without a recognised mode: seed on turn 0, else reseed
   * (the router cannot assume the KV is resident when the worker does not say so).
   */
  static KvcMode modeFor(KvcRequest r) {
    return r.turn() == 0 ? KvcMode.SEED : KvcMode.RESEED;
  }
}
