package io.kvselect.core.error;

import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

class SelectionExceptionUnwrapTest {

  @Test
  void peelsEveryStageWrapperButNothingElse() {
    SelectionException cause = SelectionException.notFound("x");
    assertSame(cause, SelectionException.unwrap(cause));
    assertSame(cause, SelectionException.unwrap(new CompletionException(cause)));
    assertSame(cause, SelectionException.unwrap(new ExecutionException(cause)));
    assertSame(
        cause, SelectionException.unwrap(new CompletionException(new ExecutionException(cause))));
    CompletionException bare = new CompletionException("no cause", null);
    assertSame(
        bare, SelectionException.unwrap(bare), "a wrapper without a cause is the failure itself");
    IllegalStateException other = new IllegalStateException(new RuntimeException("inner"));
    assertSame(other, SelectionException.unwrap(other), "other exceptions keep their cause");
  }
}
