package io.kvselect.core.kvc;

/** {@link KvcStateContract} against {@link LocalKvcState}: every handle is the one local state. */
class LocalKvcStateTest extends KvcStateContract {

  private final LocalKvcState state = new LocalKvcState();

  @Override
  protected KvcState state(int handle) {
    return state;
  }
}
