"""The outputs of the headless commands, built from a run: JSON documents and the lines of their text forms.

Pure core: nothing here prints or imports a terminal library; the command line writes what these modules make.
"""
