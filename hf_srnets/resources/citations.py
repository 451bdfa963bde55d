"""BibTeX entries of the papers behind the objectives, and the citations a model card lists for one."""

from __future__ import annotations

from collections.abc import Iterable

PACKAGE_CITATION = "winwin"  # every card cites the SRNet paper first

BIBTEX: dict[str, str] = {
    "winwin": """@inproceedings{liu2022winwin,
  title     = {A Win-win Deal: Towards Sparse and Robust Pre-trained Language Models},
  author    = {Liu, Yuanxin and Meng, Fandong and Lin, Zheng and Li, Jiangnan and Fu, Peng and Cao, Yanan and
               Wang, Weiping and Zhou, Jie},
  booktitle = {Advances in Neural Information Processing Systems},
  year      = {2022}
}""",
    "clark": """@inproceedings{clark2019dont,
  title     = {Don't Take the Easy Way Out: Ensemble Based Methods for Avoiding Known Dataset Biases},
  author    = {Clark, Christopher and Yatskar, Mark and Zettlemoyer, Luke},
  booktitle = {EMNLP-IJCNLP},
  year      = {2019}
}""",
    "utama": """@inproceedings{utama2020mind,
  title     = {Mind the Trade-off: Debiasing NLU Models without Degrading the In-distribution Performance},
  author    = {Utama, Prasetya Ajie and Moosavi, Nafise Sadat and Gurevych, Iryna},
  booktitle = {ACL},
  year      = {2020}
}""",
    # Robustness Challenges: RMC and the origins of its baselines (Du et al. 2023, §6.2, appendix C)
    "rmc": """@inproceedings{du2023robustness,
  title     = {Robustness Challenges in Model Distillation and Pruning for Natural Language Understanding},
  author    = {Du, Mengnan and Mukherjee, Subhabrata and Cheng, Yu and Shokouhi, Milad and Hu, Xia and
               Awadallah, Ahmed Hassan},
  booktitle = {Proceedings of the 17th Conference of the European Chapter of the Association for Computational
               Linguistics ({EACL})},
  year      = {2023}
}""",
    "hinton": """@inproceedings{hinton2015distilling,
  title     = {Distilling the Knowledge in a Neural Network},
  author    = {Hinton, Geoffrey and Vinyals, Oriol and Dean, Jeff},
  booktitle = {NIPS Deep Learning and Representation Learning Workshop},
  year      = {2015},
  note      = {arXiv:1503.02531}
}""",
    "sanh2019distilbert": """@inproceedings{sanh2019distilbert,
  title     = {{DistilBERT}, a distilled version of {BERT}: smaller, faster, cheaper and lighter},
  author    = {Sanh, Victor and Debut, Lysandre and Chaumond, Julien and Wolf, Thomas},
  booktitle = {5th Workshop on Energy Efficient Machine Learning and Cognitive Computing ({EMC2}) at NeurIPS},
  year      = {2019},
  note      = {arXiv:1910.01108}
}""",
    "lagunas2021block": """@inproceedings{lagunas2021block,
  title     = {Block Pruning For Faster Transformers},
  author    = {Lagunas, Fran{\\c{c}}ois and Charlaix, Ella and Sanh, Victor and Rush, Alexander M.},
  booktitle = {Proceedings of the 2021 Conference on Empirical Methods in Natural Language Processing ({EMNLP})},
  pages     = {10619--10629},
  year      = {2021}
}""",
    "muller": """@inproceedings{muller2019when,
  title     = {When Does Label Smoothing Help?},
  author    = {M{\\"u}ller, Rafael and Kornblith, Simon and Hinton, Geoffrey E.},
  booktitle = {Advances in Neural Information Processing Systems},
  year      = {2019}
}""",
    "focal": """@inproceedings{lin2017focal,
  title     = {Focal Loss for Dense Object Detection},
  author    = {Lin, Tsung-Yi and Goyal, Priya and Girshick, Ross and He, Kaiming and Doll{\\'a}r, Piotr},
  booktitle = {Proceedings of the IEEE International Conference on Computer Vision ({ICCV})},
  pages     = {2980--2988},
  year      = {2017}
}""",
    "jtt": """@inproceedings{liu2021just,
  title     = {Just Train Twice: Improving Group Robustness without Training Group Information},
  author    = {Liu, Evan Z. and Haghgoo, Behzad and Chen, Annie S. and Raghunathan, Aditi and Koh, Pang Wei and
               Sagawa, Shiori and Liang, Percy and Finn, Chelsea},
  booktitle = {Proceedings of the 38th International Conference on Machine Learning ({ICML})},
  pages     = {6781--6792},
  year      = {2021}
}""",
    # Robust Lottery Tickets: the paper, its methods (L0 masks, FreeLB) and its attacks
    "zheng2022robust": """@inproceedings{zheng2022robust,
  title     = {Robust Lottery Tickets for Pre-trained Language Models},
  author    = {Zheng, Rui and Bao, Rong and Zhou, Yuhao and Liang, Di and Wang, Sirui and Wu, Wei and Gui, Tao and
               Zhang, Qi and Huang, Xuanjing},
  booktitle = {Proceedings of the 60th Annual Meeting of the Association for Computational Linguistics (Volume 1:
               Long Papers)},
  pages     = {2211--2224},
  year      = {2022}
}""",
    "sun2024wanda": """@inproceedings{sun2024wanda,
  title     = {A Simple and Effective Pruning Approach for Large Language Models},
  author    = {Sun, Mingjie and Liu, Zhuang and Bair, Anna and Kolter, J. Zico},
  booktitle = {The Twelfth International Conference on Learning Representations, {ICLR} 2024},
  year      = {2024}
}""",
    "louizos2018learning": """@inproceedings{louizos2018learning,
  title     = {Learning Sparse Neural Networks through {L_0} Regularization},
  author    = {Louizos, Christos and Welling, Max and Kingma, Diederik P.},
  booktitle = {6th International Conference on Learning Representations, {ICLR} 2018},
  year      = {2018}
}""",
    "xia2022structured": """@inproceedings{xia2022structured,
  title     = {Structured Pruning Learns Compact and Accurate Models},
  author    = {Xia, Mengzhou and Zhong, Zexuan and Chen, Danqi},
  booktitle = {Proceedings of the 60th Annual Meeting of the Association for Computational Linguistics (Volume 1:
               Long Papers)},
  year      = {2022}
}""",
    "zhu2020freelb": """@inproceedings{zhu2020freelb,
  title     = {{FreeLB}: Enhanced Adversarial Training for Natural Language Understanding},
  author    = {Zhu, Chen and Cheng, Yu and Gan, Zhe and Sun, Siqi and Goldstein, Tom and Liu, Jingjing},
  booktitle = {8th International Conference on Learning Representations, {ICLR} 2020},
  year      = {2020}
}""",
    "morris2020textattack": """@inproceedings{morris2020textattack,
  title     = {{TextAttack}: A Framework for Adversarial Attacks, Data Augmentation, and Adversarial Training in
               {NLP}},
  author    = {Morris, John and Lifland, Eli and Yoo, Jin Yong and Grigsby, Jake and Jin, Di and Qi, Yanjun},
  booktitle = {Proceedings of the 2020 Conference on Empirical Methods in Natural Language Processing: System
               Demonstrations},
  pages     = {119--126},
  year      = {2020}
}""",
    "jin2020bert": """@inproceedings{jin2020bert,
  title     = {Is {BERT} Really Robust? A Strong Baseline for Natural Language Attack on Text Classification and
               Entailment},
  author    = {Jin, Di and Jin, Zhijing and Zhou, Joey Tianyi and Szolovits, Peter},
  booktitle = {The Thirty-Fourth {AAAI} Conference on Artificial Intelligence, {AAAI} 2020},
  pages     = {8018--8025},
  year      = {2020}
}""",
    "li2019textbugger": """@inproceedings{li2019textbugger,
  title     = {{TextBugger}: Generating Adversarial Text Against Real-world Applications},
  author    = {Li, Jinfeng and Ji, Shouling and Du, Tianyu and Li, Bo and Wang, Ting},
  booktitle = {26th Annual Network and Distributed System Security Symposium, {NDSS} 2019},
  year      = {2019},
  note      = {arXiv:1812.05271}
}""",
    "li2020bertattack": """@inproceedings{li2020bertattack,
  title     = {{BERT-ATTACK}: Adversarial Attack Against {BERT} Using {BERT}},
  author    = {Li, Linyang and Ma, Ruotian and Guo, Qipeng and Xue, Xiangyang and Qiu, Xipeng},
  booktitle = {Proceedings of the 2020 Conference on Empirical Methods in Natural Language Processing ({EMNLP})},
  pages     = {6193--6202},
  year      = {2020}
}""",
    "garg2020bae": """@inproceedings{garg2020bae,
  title     = {{BAE}: {BERT}-based Adversarial Examples for Text Classification},
  author    = {Garg, Siddhant and Ramakrishnan, Goutham},
  booktitle = {Proceedings of the 2020 Conference on Empirical Methods in Natural Language Processing ({EMNLP})},
  pages     = {6174--6181},
  year      = {2020}
}""",
}


def format_bibtex(keys: Iterable[str]) -> str:
    """The BibTeX entries of `keys`, separated by blank lines (the card's Citation section)."""
    keys = list(keys)
    unknown = [key for key in keys if key not in BIBTEX]
    if unknown:
        raise KeyError(f"No BibTeX entry for {unknown}; add it to hf_srnets.resources.citations.BIBTEX")
    return "\n\n".join(BIBTEX[key] for key in keys)
