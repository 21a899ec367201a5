package io.kvselect.core.catalog;

/** Catalog lifecycle of a worker; only {@link #SCHEDULABLE} workers are selected. */
public enum Lifecycle {
  INCOMPLETE("incomplete"),
  SCHEDULABLE("schedulable"),
  DRAINING("draining"),
  UNSCHEDULABLE("unschedulable");

  private final String wireName;

  Lifecycle(String wireName) {
    this.wireName = wireName;
  }

  public String wireName() {
    return wireName;
  }
}
