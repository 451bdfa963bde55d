"""Resources shared by packages that do not import each other: word vectors (the bias model's features and the
attacks' synonym swaps) and the BibTeX of the methods (losses, objectives and cards)."""
