from ._cli.entry import main

main()
