package io.kvselect.tools.chaos;

/**
 * The settings the phases read, resolved from the command line ({@code --short} applied). Immutable.
 *
 * @param victim index of the node every fault is applied to
 * @param leadSecs load before a phase's fault
 * @param recoverySecs load after a phase's fault was undone
 * @param drainSecs bound of the wait for every {@code /loads} to reach 0 (and for full membership)
 * @param startTimeoutSecs bound of a node's start until {@code /ready}
 */
record ChaosOptions(
    int clients,
    int victim,
    double baselineSecs,
    double leadSecs,
    double recoverySecs,
    int drainSecs,
    int startTimeoutSecs) {}
