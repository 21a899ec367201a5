package io.kvselect.core.catalog;

/**
 * A routing partition {@code (model_name, routing_group)}: it owns one index, one load view and
 * one block size. Both parts default to {@code "default"}.
 */
public record PartitionKey(String modelName, String routingGroup)
    implements Comparable<PartitionKey> {

  public static final String DEFAULT = "default";

  public PartitionKey {
    modelName = modelName == null ? DEFAULT : modelName;
    routingGroup = routingGroup == null ? DEFAULT : routingGroup;
  }

  /** Parses the {@code "model:group"} form of {@code /dump} keys (split on the first colon). */
  public static PartitionKey parse(String key) {
    int i = key.indexOf(':');
    return i < 0
        ? new PartitionKey(key, DEFAULT)
        : new PartitionKey(key.substring(0, i), key.substring(i + 1));
  }

  @Override
  public int compareTo(PartitionKey o) {
    int c = modelName.compareTo(o.modelName);
    return c != 0 ? c : routingGroup.compareTo(o.routingGroup);
  }

  @Override
  public String toString() {
    return modelName + ":" + routingGroup;
  }
}
