package io.kvselect.core.service;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.config.RouterConfigOverride;

/**
 * A {@code POST /reservations} body. With {@code workerId} it is the explicit form (prompt and
 * worker identity supplied); without, the cached replay of a prior {@code /select} with the same
 * {@code selectionId} in the same partition, and every other field is ignored.
 */
public record ReservationRequest(
    PartitionKey partition,
    String selectionId,
    Long workerId,
    Integer dpRank,
    PromptInput prompt,
    Long expectedOutputTokens,
    Long effectivePrefillTokens,
    Boolean trackPrefillTokens,
    RouterConfigOverride override) {

  public ReservationRequest {
    override = override == null ? RouterConfigOverride.NONE : override;
  }

  public static ReservationRequest replay(PartitionKey partition, String selectionId) {
    return new ReservationRequest(partition, selectionId, null, null, null, null, null, null, null);
  }

  public boolean explicit() {
    return workerId != null;
  }
}
