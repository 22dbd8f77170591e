"""Small BFCL-format entries written for the tests: every category kind, dotted names,
``""`` answers, nested dicts and lists, and every BFCL type (dict, float, tuple, any)."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import orjson


def _fn(name: str, props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"The {name} function.",
        "parameters": {"type": "dict", "properties": props, "required": required},
    }


TRIANGLE = _fn(
    "calculate_triangle_area",
    {
        "base": {"type": "integer", "description": "The base."},
        "height": {"type": "integer", "description": "The height."},
        "unit": {"type": "string", "description": "The unit (default 'units')."},
    },
    ["base", "height"],
)
FACTORIAL = _fn("math.factorial", {"number": {"type": "integer"}}, ["number"])
HYPOT = _fn(
    "math.hypot",
    {"x": {"type": "float"}, "y": {"type": "float"}, "z": {"type": "float", "optional": True}},
    ["x", "y"],
)
WEATHER = _fn(
    "weather.get",
    {
        "city": {"type": "string"},
        "units": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "days": {"type": "integer"},
    },
    ["city"],
)
PLOT = _fn(
    "plot.points",
    {
        "points": {"type": "array", "items": {"type": "tuple", "items": {"type": "float"}}},
        "style": {"type": "any"},
        "labels": {"type": "array", "items": {"type": "string"}},
    },
    ["points"],
)
ORDER = _fn(
    "ChaDri.change_drink",
    {
        "drink_id": {"type": "string"},
        "new_preferences": {
            "type": "dict",
            "properties": {
                "size": {"type": "string", "enum": ["small", "medium", "large"]},
                "milk_type": {"type": "string"},
            },
        },
        "extras": {
            "type": "array",
            "items": {"type": "dict", "properties": {"name": {"type": "string"}}},
        },
    },
    ["drink_id", "new_preferences"],
)


# BFCL's "default": null (Python None): its own answers send None for these (as in
# live_multiple_23-5-0), so the import makes them nullable
SEARCH = _fn(
    "search_products",
    {
        "category": {"type": "string"},
        "color": {"type": "string", "default": None},
        "size": {"type": "string", "enum": ["S", "M", "L"], "default": None},
        "price_max": {"type": "float", "default": None},
        "brand": {"type": "string", "default": "acme"},
        "filters": {"type": "dict", "default": None, "properties": {"sale": {"type": "boolean"}}},
        "tags": {"type": "any", "default": None},
    },
    ["category"],
)


def _q(text: str, system: str | None = None) -> list[list[dict[str, str]]]:
    turn = [{"role": "system", "content": system}] if system else []
    return [[*turn, {"role": "user", "content": text}]]


QUESTIONS: dict[str, list[dict[str, Any]]] = {
    "simple_python": [
        {
            "id": "simple_python_0",
            "question": _q("Area of a triangle, base 10, height 5."),
            "function": [TRIANGLE],
        },
        {"id": "simple_python_1", "question": _q("Factorial of 5."), "function": [FACTORIAL]},
        {"id": "simple_python_2", "question": _q("Hypotenuse of 4 and 5."), "function": [HYPOT]},
        {"id": "simple_python_3", "question": _q("Plot (1,2) and (3,4)."), "function": [PLOT]},
    ],
    "multiple": [
        {
            "id": "multiple_0",
            "question": _q("Weather in Paris in celsius."),
            "function": [WEATHER, FACTORIAL],
        },
    ],
    "parallel": [
        {"id": "parallel_0", "question": _q("Factorials of 5 and 6."), "function": [FACTORIAL]},
    ],
    "parallel_multiple": [
        {
            "id": "parallel_multiple_0",
            "question": _q("Weather in Rome, and the factorial of 3."),
            "function": [WEATHER, FACTORIAL],
        },
    ],
    "irrelevance": [
        {"id": "irrelevance_0", "question": _q("Who wrote Hamlet?"), "function": [TRIANGLE]},
    ],
    "live_simple": [
        {
            "id": "live_simple_0-0-0",
            "question": _q("A large latte with coconut milk, order 42.", system="You take orders."),
            "function": [ORDER],
        },
    ],
    "live_multiple": [
        {
            "id": "live_multiple_0-0-0",
            "question": _q("Weather in Oslo for 3 days."),
            "function": [WEATHER, ORDER],
        },
        {
            "id": "live_multiple_1-5-0",
            "question": _q("Do you have red shoes?"),
            "function": [SEARCH, WEATHER],
        },
    ],
    "live_parallel": [
        {
            "id": "live_parallel_0-0-0",
            "question": _q("Weather in Lima and in Quito."),
            "function": [WEATHER],
        },
    ],
    "live_parallel_multiple": [
        {
            "id": "live_parallel_multiple_0-0-0",
            "question": _q("Factorial of 4 and the weather in Bern."),
            "function": [FACTORIAL, WEATHER],
        },
    ],
    "live_irrelevance": [
        {"id": "live_irrelevance_0-0-0", "question": _q("Tell me a joke."), "function": [WEATHER]},
    ],
    "live_relevance": [
        {
            "id": "live_relevance_0-0-0",
            "question": _q("Anything about the weather in Kyiv?"),
            "function": [WEATHER],
        },
    ],
}

ANSWERS: dict[str, list[dict[str, Any]]] = {
    "simple_python": [
        {
            "id": "simple_python_0",
            "ground_truth": [
                {"calculate_triangle_area": {"base": [10], "height": [5], "unit": ["units", ""]}}
            ],
        },
        {"id": "simple_python_1", "ground_truth": [{"math.factorial": {"number": [5]}}]},
        {
            "id": "simple_python_2",
            "ground_truth": [{"math.hypot": {"x": [4.0], "y": [5.0], "z": ["", 0.0]}}],
        },
        {
            "id": "simple_python_3",
            "ground_truth": [
                {
                    "plot.points": {
                        "points": [[[1.0, 2.0], [3.0, 4.0]]],
                        "style": [""],
                        "labels": [["a", "b"], ""],
                    }
                }
            ],
        },
    ],
    "multiple": [
        {
            "id": "multiple_0",
            "ground_truth": [
                {
                    "weather.get": {
                        "city": ["Paris", "Paris, France"],
                        "units": ["celsius", ""],
                        "days": [""],
                    }
                }
            ],
        },
    ],
    "parallel": [
        {
            "id": "parallel_0",
            "ground_truth": [
                {"math.factorial": {"number": [5]}},
                {"math.factorial": {"number": [6]}},
            ],
        },
    ],
    "parallel_multiple": [
        {
            "id": "parallel_multiple_0",
            "ground_truth": [
                {"weather.get": {"city": ["Rome"], "units": [""], "days": [""]}},
                {"math.factorial": {"number": [3]}},
            ],
        },
    ],
    "live_simple": [
        {
            "id": "live_simple_0-0-0",
            "ground_truth": [
                {
                    "ChaDri.change_drink": {
                        "drink_id": ["42"],
                        "new_preferences": [
                            {"size": ["large"], "milk_type": ["coconut", "coconut milk"]}
                        ],
                        "extras": ["", [{"name": ["foam", "milk foam"]}]],
                    }
                }
            ],
        },
    ],
    "live_multiple": [
        {
            "id": "live_multiple_0-0-0",
            "ground_truth": [{"weather.get": {"city": ["Oslo"], "days": [3], "units": [""]}}],
        },
        {
            "id": "live_multiple_1-5-0",
            "ground_truth": [
                {
                    "search_products": {
                        "category": ["shoes"],
                        "color": ["red"],
                        "size": ["", None],
                        "price_max": ["", None],
                        "filters": ["", None],
                    }
                }
            ],
        },
    ],
    "live_parallel": [
        {
            "id": "live_parallel_0-0-0",
            "ground_truth": [
                {"weather.get": {"city": ["Lima"]}},
                {"weather.get": {"city": ["Quito"]}},
            ],
        },
    ],
    "live_parallel_multiple": [
        {
            "id": "live_parallel_multiple_0-0-0",
            "ground_truth": [
                {"math.factorial": {"number": [4]}},
                {"weather.get": {"city": ["Bern"]}},
            ],
        },
    ],
}


def _jsonl(entries: list[dict[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(e) + b"\n" for e in entries)


def files() -> dict[str, bytes]:
    """The data files by their path under BFCL's data folder."""
    out = {}
    for category, entries in QUESTIONS.items():
        out[f"BFCL_v4_{category}.json"] = _jsonl(entries)
    for category, entries in ANSWERS.items():
        out[f"possible_answer/BFCL_v4_{category}.json"] = _jsonl(entries)
    return out


def write_folder(root: Path) -> Path:
    """BFCL's data folder layout under ``root``."""
    for name, data in files().items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return root


def write_wheel(root: Path, version: str = "2099.1.1") -> Path:
    """A wheel-shaped zip holding the same files, as pip would download it."""
    path = root / f"bfcl_eval-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in files().items():
            zf.writestr(f"bfcl_eval/data/{name}", data)
    return path
