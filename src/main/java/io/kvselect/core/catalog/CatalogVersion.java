package io.kvselect.core.catalog;

/**
 * The version of one worker's catalog entry, which decides between two changes of one worker made
 * on different nodes: the greater version wins everywhere (last writer wins), so nodes that saw
 * the same changes in any order end with the same catalog.
 *
 * <p>{@code stamp} is a hybrid logical clock reading (milliseconds of the wall clock, raised past
 * every stamp the node has seen, see {@link CatalogVersions}); {@code tie} orders two changes
 * with the same stamp: a hash of the upserted spec, or {@link #REMOVAL_TIE} for a removal, so a
 * removal wins a tie and two nodes break every tie the same way. {@link #ZERO} is older than
 * every stamped change: the version of a change from a sender that does not stamp (a recovery
 * copy, an older version-1 writer).
 */
public record CatalogVersion(long stamp, long tie) implements Comparable<CatalogVersion> {

  /** The tie of every removal: greater than every upsert's. */
  public static final long REMOVAL_TIE = Long.MAX_VALUE;

  /** Older than every stamped version. */
  public static final CatalogVersion ZERO = new CatalogVersion(0, 0);

  @Override
  public int compareTo(CatalogVersion o) {
    int c = Long.compare(stamp, o.stamp);
    return c != 0 ? c : Long.compare(tie, o.tie);
  }

  public boolean newerThan(CatalogVersion o) {
    return compareTo(o) > 0;
  }

  /**
   * The tie of an upsert of {@code spec}: a 63-bit FNV-1a hash of its text form. Computed once,
   * where the change is made, and carried with it, so receivers never recompute it.
   */
  public static long upsertTie(WorkerSpec spec) {
    String s = spec.toString();
    long h = 0xcbf29ce484222325L;
    for (int i = 0; i < s.length(); i++) {
      h ^= s.charAt(i);
      h *= 0x100000001b3L;
    }
    return (h & Long.MAX_VALUE) == REMOVAL_TIE ? REMOVAL_TIE - 1 : h & Long.MAX_VALUE;
  }
}
