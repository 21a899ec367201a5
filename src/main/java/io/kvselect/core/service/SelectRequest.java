package io.kvselect.core.service;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.config.RouterConfigOverride;
import io.kvselect.core.index.WorkerRank;
import java.util.Map;
import java.util.Set;

/**
 * A {@code /select} or {@code /select_and_reserve} request. Nullable fields are absent.
 * {@code affinityTarget} may leave the rank open ({@code dpRank < 0}) to target any rank of the
 * worker. {@link #effectiveSessionId()} applies "structured form wins". {@code policyClass},
 * {@code priorityJump} (seconds) and {@code strictPriority} only matter when the request waits in
 * the router queue.
 */
public record SelectRequest(
    PartitionKey partition,
    String selectionId,
    PromptInput prompt,
    RouterConfigOverride override,
    Long expectedOutputTokens,
    String sessionId,
    SessionContext sessionContext,
    WorkerRank affinityTarget,
    WorkerRank pinnedWorker,
    long[] allowedWorkerIds,
    Set<String> requiredTaints,
    Map<String, Double> preferredTaints,
    boolean advisory,
    String policyClass,
    Double priorityJump,
    Long strictPriority) {

  /** A request without queue hints (policy class, {@code priority_jump}, {@code strict_priority}). */
  public SelectRequest(
      PartitionKey partition,
      String selectionId,
      PromptInput prompt,
      RouterConfigOverride override,
      Long expectedOutputTokens,
      String sessionId,
      SessionContext sessionContext,
      WorkerRank affinityTarget,
      WorkerRank pinnedWorker,
      long[] allowedWorkerIds,
      Set<String> requiredTaints,
      Map<String, Double> preferredTaints,
      boolean advisory) {
    this(
        partition,
        selectionId,
        prompt,
        override,
        expectedOutputTokens,
        sessionId,
        sessionContext,
        affinityTarget,
        pinnedWorker,
        allowedWorkerIds,
        requiredTaints,
        preferredTaints,
        advisory,
        null,
        null,
        null);
  }

  public SelectRequest {
    override = override == null ? RouterConfigOverride.NONE : override;
    requiredTaints = requiredTaints == null ? Set.of() : requiredTaints;
    preferredTaints = preferredTaints == null ? Map.of() : preferredTaints;
  }

  /** A plain request for a prompt in a partition, with no selection id or constraints. */
  public static SelectRequest of(PartitionKey partition, PromptInput prompt) {
    return new SelectRequest(
        partition, null, prompt, null, null, null, null, null, null, null, null, null, false);
  }

  public SelectRequest withSelectionId(String id) {
    return new SelectRequest(
        partition,
        id,
        prompt,
        override,
        expectedOutputTokens,
        sessionId,
        sessionContext,
        affinityTarget,
        pinnedWorker,
        allowedWorkerIds,
        requiredTaints,
        preferredTaints,
        advisory,
        policyClass,
        priorityJump,
        strictPriority);
  }

  /** The same request in session {@code id} (the flat {@code session_id} form). */
  public SelectRequest withSessionId(String id) {
    return new SelectRequest(
        partition,
        selectionId,
        prompt,
        override,
        expectedOutputTokens,
        id,
        sessionContext,
        affinityTarget,
        pinnedWorker,
        allowedWorkerIds,
        requiredTaints,
        preferredTaints,
        advisory,
        policyClass,
        priorityJump,
        strictPriority);
  }

  /**
   * The same request pinned to {@code rank} ({@code pinned_worker}), with any affinity target
   * dropped, since a pin is the stronger constraint.
   */
  public SelectRequest withPinnedWorker(WorkerRank rank) {
    return new SelectRequest(
        partition,
        selectionId,
        prompt,
        override,
        expectedOutputTokens,
        sessionId,
        sessionContext,
        null,
        rank,
        allowedWorkerIds,
        requiredTaints,
        preferredTaints,
        advisory,
        policyClass,
        priorityJump,
        strictPriority);
  }

  /** The same request in the router queue's policy class {@code name} (null: the default class). */
  public SelectRequest withPolicyClass(String name) {
    return new SelectRequest(
        partition,
        selectionId,
        prompt,
        override,
        expectedOutputTokens,
        sessionId,
        sessionContext,
        affinityTarget,
        pinnedWorker,
        allowedWorkerIds,
        requiredTaints,
        preferredTaints,
        advisory,
        name,
        priorityJump,
        strictPriority);
  }

  public String effectiveSessionId() {
    return sessionContext != null ? sessionContext.sessionId() : sessionId;
  }
}
