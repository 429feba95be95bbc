"""Rule learning on the array engine: items, coverage by matrix products, rule measures,
class association rules (Apriori), ROCCER rule selection and exception rules.

See docs/rules.md.
"""

from __future__ import annotations

from ._apriori import RuleSet, antecedent_matrix, class_association_rules, frequent_itemsets
from ._coverage import class_counts, rule_counts, rule_matches
from ._exceptions import ExceptionRules, tree_rules
from ._items import ItemEncoder
from ._measures import MEASURES, laplace, rule_measures
from ._roccer import ROCCERClassifier, first_match, roccer_select

__all__ = [
    "MEASURES",
    "ExceptionRules",
    "ItemEncoder",
    "ROCCERClassifier",
    "RuleSet",
    "antecedent_matrix",
    "class_association_rules",
    "class_counts",
    "first_match",
    "frequent_itemsets",
    "laplace",
    "rule_counts",
    "rule_matches",
    "roccer_select",
    "rule_measures",
    "tree_rules",
]
