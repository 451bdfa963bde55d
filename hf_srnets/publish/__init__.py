"""Publishing a run: the facts a model card states (`card_facts`), the card itself from its template (`card`) and
the Hub uploads of masks, merged models and cards (`hub`)."""
