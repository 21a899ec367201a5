package io.kvselect.server;

public final class Launcher {
  public static void main(String[] args) {
  }
}
