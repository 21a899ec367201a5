package io.kvselect.core.service;

import io.kvselect.core.catalog.PartitionKey;

/** Key of the pending-selection cache: a selection id is scoped by its partition. */
record PendingKey(PartitionKey partition, String selectionId) {}
