package io.kvselect.core.index;

import java.util.Locale;

/** Where a cached block lives. Lower tiers only extend a device prefix (see {@link BlockIndex}). */
public enum StorageTier {
  DEVICE("device"),
  HOST_PINNED("host_pinned"),
  DISK("disk"),
  EXTERNAL("external");

  private final String wireName;

  StorageTier(String wireName) {
    this.wireName = wireName;
  }

  /** The snake_case name used by {@code /dump} and the JSON APIs. */
  public String wireName() {
    return wireName;
  }

  /** Parses a {@link #wireName()}; returns null when unknown. */
  public static StorageTier fromWireName(String name) {
    for (StorageTier t : values()) {
      if (t.wireName.equals(name)) {
        return t;
      }
    }
    return null;
  }

  /**
   * Maps an engine event's {@code medium} to a tier as Dynamo does: GPU/DEVICE/absent -> device,
   * CPU/CPU_PINNED/CPU_TIER1 -> host_pinned, CPU_TIER2/DISK/NVME -> disk,
   * EXTERNAL/NETWORK/REMOTE/SHARED -> external; anything unknown -> device.
   */
  public static StorageTier fromMedium(String medium) {
    if (medium == null) {
      return DEVICE;
    }
    switch (medium.toUpperCase(Locale.ROOT)) {
      case "CPU":
      case "CPU_PINNED":
      case "CPU_TIER1":
        return HOST_PINNED;
      case "CPU_TIER2":
      case "DISK":
      case "NVME":
        return DISK;
      case "EXTERNAL":
      case "NETWORK":
      case "REMOTE":
      case "SHARED":
        return EXTERNAL;
      default:
        return DEVICE;
    }
  }
}
