from toolstand.cli import main

raise SystemExit(main())
