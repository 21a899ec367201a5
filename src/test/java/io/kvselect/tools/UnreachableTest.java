package io.kvselect.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.net.ConnectException;
import java.net.UnknownHostException;
import java.net.http.HttpConnectTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

/** The one-line reasons {@link Unreachable} gives for the failures the tools' HTTP clients raise. */
class UnreachableTest {

  private static final String URL = "http://127.0.0.1:8092/workers";

  private static String message(Throwable cause) {
    return new Unreachable("kvselect", URL, cause).getMessage();
  }

  @Test
  void jdkClientRefusalWithoutMessageIsConnectionRefused() {
    ConnectException e = new ConnectException();
    e.initCause(new ConnectException("Connection refused"));
    assertEquals("cannot reach kvselect at " + URL + ": connection refused", message(e));
    assertEquals(
        "cannot reach kvselect at " + URL + ": connection refused",
        message(new ConnectException()));
  }

  @Test
  void nettyRefusalDropsTheRepeatedAddress() {
    Throwable e =
        new ExecutionException(new ConnectException("Connection refused: /127.0.0.1:8092"));
    assertEquals("cannot reach kvselect at " + URL + ": connection refused", message(e));
  }

  @Test
  void unknownHostAndTimeoutAreNamed() {
    ConnectException unresolved = new ConnectException();
    unresolved.initCause(new UnresolvedAddressException());
    assertEquals("cannot reach kvselect at " + URL + ": unknown host", message(unresolved));
    assertEquals(
        "cannot reach kvselect at " + URL + ": unknown host",
        message(new UnknownHostException("nohost.invalid")));
    assertEquals(
        "cannot reach kvselect at " + URL + ": connect timed out",
        message(new HttpConnectTimeoutException("HTTP connect timed out")));
  }

  @Test
  void otherFailuresKeepTheirMessageOnOneLine() {
    assertEquals(
        "cannot reach kvselect at " + URL + ": stream closed early",
        message(new IOException("stream closed\n early")));
    assertEquals(
        "first second",
        Unreachable.message(new ExecutionException(new IOException("first\n  second"))));
    assertEquals("IOException", Unreachable.message(new IOException()));
  }
}
