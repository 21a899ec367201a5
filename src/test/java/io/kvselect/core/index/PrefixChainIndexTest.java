package io.kvselect.core.index;

class PrefixChainIndexTest extends BlockIndexContract {

  @Override
  BlockIndex newIndex() {
    return new PrefixChainIndex();
  }
}
