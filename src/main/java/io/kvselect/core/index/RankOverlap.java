package io.kvselect.core.index;

/**
 * Tiered prefix match of one rank, in blocks. {@code device} is the leading-prefix depth on the
 * device tier; each lower tier reports the additional contiguous blocks beyond the previous tiers'
 * depth (host extends device, disk extends device+host, external extends device+host+disk).
 */
public record RankOverlap(int device, int hostExtension, int diskExtension, int externalExtension) {

  public static final RankOverlap NONE = new RankOverlap(0, 0, 0, 0);

  /** Total matched depth over all tiers, in blocks. */
  public int totalBlocks() {
    return device + hostExtension + diskExtension + externalExtension;
  }
}
