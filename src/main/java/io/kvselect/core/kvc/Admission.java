package io.kvselect.core.kvc;

import io.kvselect.core.index.WorkerRank;
import java.util.concurrent.CompletionStage;

/**
 * Algorithm 2 as the dispatcher calls it: may decode worker {@code d} serve {@code r}? The
 * built-in implementation is {@link ResidentModel#admission}; the server's worker RPC
 * ({@code admission_endpoint}) is another. Asynchronous: an RPC completes later on its own
 * thread; a timeout or failure must complete with a reject ({@link AdmitDecision#TIMEOUT},
 * {@link AdmitDecision#RPC_ERROR}), never exceptionally.
 */
@FunctionalInterface
public interface Admission {

  CompletionStage<AdmitDecision> admit(WorkerRank d, KvcRequest r);
}
