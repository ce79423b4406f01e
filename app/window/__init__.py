"""The main window: layout, menus and their commands, the canvas widget, rulers, About."""
