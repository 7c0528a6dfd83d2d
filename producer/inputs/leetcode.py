"""What runs before a LeetCode solution in DeepCoder's (rllm's) LeetCode problems, whose tests are a
check() of asserts: rllm runs the solution after its own prelude of imports and LeetCode's list and tree
helpers, and a solution may use any of their names unimported (inf, pairwise, deque, ListNode, ...)."""

from __future__ import annotations

# What rllm (DeepCoder's judge of these, rllm/rewards/code_utils/utils.py: BASE_IMPORTS and
# BASE_LEETCODE_IMPORTS) runs before a LeetCode solution: these names from these modules, these modules,
# numpy and pandas (here only where the candidates' Python has them), and LeetCode's list and tree helpers.
_RLLM_NAMES = {
    "itertools": "accumulate chain combinations count permutations product groupby islice repeat zip_longest cycle "
    "pairwise",
    "copy": "deepcopy",
    "string": "ascii_lowercase ascii_uppercase",
    "math": "floor log2 log10 sqrt comb gcd ceil inf isqrt factorial atan2 pi log prod",
    "collections": "defaultdict deque Counter OrderedDict",
    "bisect": "bisect bisect_left bisect_right insort",
    "heapq": "heappush heappop heapify merge nlargest nsmallest heapreplace",
    "functools": "reduce cache lru_cache cmp_to_key partial",
    "random": "randrange shuffle",
    "operator": "itemgetter sub xor or_ iand",
    "os.path": "commonprefix",
    "typing": "List Tuple Dict Set Optional Union Any Callable Iterable Iterator Generator Deque",
    "time": "time",
}
_RLLM_MODULES = "copy string math collections bisect heapq functools random itertools operator re datetime sys io os"
_LEETCODE_HELPERS = """
class ListNode:
    def __init__(self, val=0, next=None):
        self.val, self.next = val, next


class TreeNode:
    def __init__(self, val=0, left=None, right=None):
        self.val, self.left, self.right = val, left, right


def list_node(values):
    head = None
    for value in reversed(values):
        head = ListNode(value, head)
    return head


def is_same_list(a, b):
    while a and b:
        if a.val != b.val:
            return False
        a, b = a.next, b.next
    return a is None and b is None


def tree_node(values):
    # LeetCode's level order: each node's children in turn, None where there is none.
    if not values:
        return None
    root = TreeNode(values[0])
    parents, at = deque([root]), 1
    while parents and at < len(values):
        node = parents.popleft()
        for side in ("left", "right"):
            if at < len(values) and values[at] is not None:
                child = TreeNode(values[at])
                setattr(node, side, child)
                parents.append(child)
            at += 1
    return root


def is_same_tree(p, q):
    if p is None or q is None:
        return p is q
    return p.val == q.val and is_same_tree(p.left, q.left) and is_same_tree(p.right, q.right)
"""
RLLM_SETUP = (
    "".join(f"from {module} import {', '.join(names.split())}\n" for module, names in _RLLM_NAMES.items())
    + "from re import search as re_search\n"
    + "".join(f"import {module}\n" for module in _RLLM_MODULES.split())
    + "try:\n    import numpy as np\n    import pandas as pd\nexcept ImportError:\n    pass\n"
    + _LEETCODE_HELPERS
)
#: What a warm interpreter imports for these problems before its forks: the prelude's modules.
RLLM_PRELOAD = sorted({*_RLLM_MODULES.split(), *_RLLM_NAMES, "numpy", "pandas"})
