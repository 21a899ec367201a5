package io.kvselect.server.events;

import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * Resolves the host of a {@code tcp://} endpoint before a SUB socket connects to it. A name that
 * does not resolve (yet) leaves the rank retrying with backoff instead of failing; injectable so
 * tests can make a name resolve late. Called on the rank's poller thread; it blocks that thread
 * for as long as the lookup takes, like JeroMQ's own {@code connect}.
 */
@FunctionalInterface
public interface HostResolver {

  /** The JVM's resolver ({@link InetAddress#getByName}), with its positive and negative caches. */
  HostResolver SYSTEM = InetAddress::getByName;

  /** Resolves {@code host} or throws. */
  InetAddress resolve(String host) throws UnknownHostException;
}
