package io.kvselect.server;

import io.kvselect.server.config.NodeSettings;

/** Test access to the launcher's one-line start failure. */
public final class LauncherAccess {

  private LauncherAccess() {}

  public static String startFailure(NodeSettings s, Throwable e) {
    return Launcher.startFailure(s, e);
  }
}
