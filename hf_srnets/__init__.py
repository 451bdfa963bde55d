"""hf_srnets: sparse and robust subnetworks (SRNets) of BERT-family models with the Hugging Face Trainer."""

__version__ = "0.1.0"
