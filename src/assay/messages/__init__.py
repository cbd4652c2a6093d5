"""The reference's message shapes: chat text extraction, tool calls and trajectories.

These helpers read the JSON shapes scorers receive (Mastra agent runs, OpenAI chat
transcripts) and sit beside the scorer pipeline, not inside it: ``scoring`` only needs
``input_text``/``output_text``, while the tool-call and trajectory scorers need the rest.
"""
