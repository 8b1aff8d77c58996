"""The teach stage: ``derive`` (:mod:`.derivation`), ``explain`` (:mod:`.explain`) and the
input-language printer (:mod:`.inputtext`) that shows expressions as a student writes them."""
