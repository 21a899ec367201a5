package io.kvselect.server.events;

/** One sequenced, still-encoded batch as read from a SUB or DEALER socket. */
record Batch(long seq, byte[] payload) {}
