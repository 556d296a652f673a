"""Front ends: each turns a source language into an ``absmc.ir.System``."""
