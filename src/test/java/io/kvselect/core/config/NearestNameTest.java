package io.kvselect.core.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The "did you mean" rule: Levenshtein distance, the nearest candidate, and how near is near. */
class NearestNameTest {

  @Test
  void distanceCountsInsertionsDeletionsAndSubstitutions() {
    assertEquals(0, NearestName.distance("", ""));
    assertEquals(3, NearestName.distance("", "abc"));
    assertEquals(3, NearestName.distance("abc", ""));
    assertEquals(0, NearestName.distance("block_size", "block_size"));
    assertEquals(1, NearestName.distance("blok_size", "block_size"), "one insertion");
    assertEquals(1, NearestName.distance("blocks_size", "block_size"), "one deletion");
    assertEquals(1, NearestName.distance("block_sise", "block_size"), "one substitution");
    assertEquals(2, NearestName.distance("bolck_size", "block_size"), "a swap is two edits");
    assertEquals(3, NearestName.distance("kitten", "sitting"));
    assertEquals(
        NearestName.distance("sitting", "kitten"), NearestName.distance("kitten", "sitting"));
  }

  @Test
  void theNearestCandidateWinsAndTiesGoToTheFirst() {
    List<String> fields = List.of("worker_id", "worker_type", "endpoint", "dp_size");
    assertEquals("worker_type", NearestName.closest("worker_typ", fields));
    assertEquals("endpoint", NearestName.closest("endpont", fields));
    assertEquals("ab", NearestName.closest("a", List.of("ab", "ac")), "a tie: the first");
    assertEquals("ac", NearestName.closest("a", List.of("ac", "ab")));
  }

  @Test
  void aCandidateFartherThanAThirdOfTheNameOrTwoEditsIsNoSuggestion() {
    // a name of 12 characters allows 4 edits
    assertEquals("abcdefghijkl", NearestName.closest("abcdefghWXYZ", List.of("abcdefghijkl")));
    assertNull(NearestName.closest("abcdefgVWXYZ", List.of("abcdefghijkl")), "5 edits: too far");
    // a short name still allows 2 edits, not 3
    assertEquals("abc", NearestName.closest("xyc", List.of("abc")));
    assertNull(NearestName.closest("xyz", List.of("abc")));
    assertNull(NearestName.closest("anything", List.of()), "no candidates, no suggestion");
  }
}
