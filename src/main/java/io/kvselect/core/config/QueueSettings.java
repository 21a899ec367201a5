package io.kvselect.core.config;

/**
 * The router queue: when requests wait for a worker, and in which order. Immutable; values are
 * checked by {@link RouterConfigLoader}.
 *
 * @param threshold {@code router_queue_threshold}: load above which requests queue (null: no
 *     queue)
 * @param policy {@code router_queue_policy}: {@code fcfs}, {@code lcfs} or {@code wspt}
 * @param policyConfig {@code router_policy_config}: path of the classes and tiers YAML (null:
 *     none)
 */
public record QueueSettings(Double threshold, String policy, String policyConfig) {

  /** Dynamo's defaults: no queue. */
  public static final QueueSettings DEFAULTS = new QueueSettings(null, "fcfs", null);
}
