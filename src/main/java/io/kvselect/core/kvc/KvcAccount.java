package io.kvselect.core.kvc;

/**
 * What the built-in admission model accounts on one decode worker: the sessions' resident tokens
 * and the tokens promised to unfinished requests (the inputs of {@link ResidentModel#decide}).
 * Immutable. Printed as {@code resident+waiting}.
 */
public record KvcAccount(long residentTokens, long waitingTokens) {

  @Override
  public String toString() {
    return residentTokens + "+" + waitingTokens;
  }
}
