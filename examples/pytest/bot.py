"""The application under test: a (very) small support bot."""

from __future__ import annotations

ANSWERS = {
    "return": "You have 30 days to return an item.",
    "open": "We are open 9 to 5, Monday to Saturday.",
    "shipping": "Shipping is free over 50 euros.",
    "warranty": "Every product has a 2 years warranty.",
    "pay": "Yes, all major cards are accepted.",
}


def answer(input: str) -> str:
    """The bot's answer to a customer's question."""
    text = input.lower()
    for keyword, reply in ANSWERS.items():
        if keyword in text:
            return reply
    return "Sorry, I do not know."
